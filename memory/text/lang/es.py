"""Spanish: the words that tell what kind of sentence a person says."""

from __future__ import annotations

from typing import Final

from .._tables import Saying

SAYING: Final = Saying(
    code="es",
    spaced=True,
    first_person=(
        "yo",
        "mi",
        "mis",
        "me",
        "mío",
        "mía",
        "nosotros",
        "nosotras",
        "nuestro",
        "nuestra",
        "nuestros",
        "nuestras",
        "soy",
        "estoy",
        "tengo",
        "vivo",
        "trabajo",
    ),
    others=(
        "mi hermana",
        "mi hermano",
        "mi madre",
        "mi mamá",
        "mi padre",
        "mi papá",
        "mi hijo",
        "mi hija",
        "mi mujer",
        "mi esposa",
        "mi marido",
        "mi esposo",
        "mi pareja",
        "mi novia",
        "mi novio",
        "mi amiga",
        "mi amigo",
        "mi compañero",
        "mi compañera",
        "mi jefe",
        "mi jefa",
        "mi vecino",
        "mi vecina",
        "mi primo",
        "mi prima",
        "mi tío",
        "mi tía",
        "mi abuela",
        "mi abuelo",
        "mi compañero de piso",
        "mi casero",
        "mi casera",
        "mi perro",
        "mi gato",
        "nuestro perro",
        "nuestro gato",
        "el perro",
        "el gato",
        "el veterinario",
        "el casero",
        "él",
        "ella",
        "ellos",
        "ellas",
        "su",
        "sus",
        "alguien",
    ),
    question_starts=(
        "¿",
        "qué",
        "que tal",
        "dónde",
        "donde",
        "cuándo",
        "cuando",
        "cómo",
        "por qué",
        "cuál",
        "cuáles",
        "quién",
        "quiénes",
        "debería",
        "puedo",
        "es",
        "son",
        "hay",
        "vale",
        "sabes",
    ),
    hypothetical=(
        "si",
        "supongamos",
        "imagina",
        "hipotéticamente",
        "en teoría",
        "sería",
        "serían",
        "podría",
        "podríamos",
        "quizás",
        "quizá",
        "tal vez",
        "a lo mejor",
        "ojalá",
        "estoy pensando",
        "pensando en",
        "considerando",
        "me planteo",
        "sueño con",
    ),
    plan=("voy a", "vamos a", "pienso", "planeo", "tengo pensado", "me gustaría", "algún día"),
    past=(
        "antes",
        "solía",
        "solíamos",
        "hace años",
        "cuando era",
        "antiguamente",
        "en su día",
        "de pequeño",
        "de pequeña",
    ),
    reported=(
        "dijo",
        "dice",
        "me dijo",
        "escribió",
        "escribe",
        "me escribió",
        "según",
        "cita",
        "me mandó",
        "me ha escrito",
    ),
    joke=(
        "broma",
        "es broma",
        "de broma",
        "bromeando",
        "jaja",
        "en mi novela",
        "en la novela",
        "en el libro",
        "en la película",
        "mi personaje",
    ),
    update=(
        "ahora",
        "ya no",
        "en vez de",
        "en lugar de",
        "cambié",
        "cambiado",
        "me mudé",
        "nos mudamos",
        "mudado",
        "nuevo",
        "nueva",
        "de nuevo",
        "otra vez",
        "dejé",
        "dejado",
        "empecé",
        "empezado",
        "desde",
        "por fin",
        "finalmente",
        "actualización",
        "volví",
        "he vuelto",
        "de vuelta",
        "vendí",
        "compré",
        "me pasé",
        "pasado a",
        "cambio de planes",
        "a partir de",
        "subido",
        "bajado",
        "ya",
        "al final",
    ),
    retraction=(
        "en realidad",
        "corrección",
        "errata",
        "error",
        "me equivoqué",
        "quise decir",
        "perdón",
        "perdona",
        "lo siento",
        "mal",
        "confundí",
        "no es así",
        "uy",
        "ups",
        "espera",
    ),
    negation=("no", "nunca", "jamás", "ningún", "ninguna", "nada", "tampoco"),
    addition=("también", "además", "otro", "otra", "segundo", "segunda", "ambos", "ambas"),
    time=tuple(
        """hoy mañana ayer noche tarde día días semana semanas fin mes meses año años vez veces tiempo
        desde hasta hace lunes martes miércoles jueves viernes sábado domingo enero febrero marzo abril
        mayo junio julio agosto septiembre octubre noviembre diciembre hora horas minutos""".split()
    ),
    calendar=tuple(
        """lunes martes miércoles jueves viernes sábado domingo enero febrero marzo abril mayo junio julio
        agosto septiembre octubre noviembre diciembre""".split()
    ),
    stop=frozenset(
        """lol jaja jeje jajaja bueno pues vale el la los las un una unos unas y o pero que de del a al en con por para sin sobre es son era fue
        soy eres somos está están estoy estaba he ha han hay tengo tiene mi mis tu tus su sus me te se nos
        le lo les muy más ya no sí si como cuando donde qué cómo este esta estos estas eso esa ese aquí
        allí ahora todo toda todos poco mucho algo""".split()
    ),
)


from .._lexicon import Lexicon, words  # noqa: E402  (the table of facts came after the table of sentences)

# The table of facts (`_facts`): for each attribute of a person's life, the everyday Spanish that says a
# sentence is about it and the words that are a value of it, with the feminine form beside the masculine
# ("vegetariano", "vegetariana"); names written alike in every language are in `en`.
FACTS: Final[dict[str, Lexicon]] = {
    "residence": Lexicon(
        triggers=words(
            """vivo, vivir, mudé, mudamos, mudado, piso, dirección, vivimos, viviendo, me mudo, mudarme,
            mudarnos, mudanza, mudada, apartamento, departamento, casa en, mi casa, casa nueva, nueva casa,
            compañero de piso, compañera de piso, compi de piso, casero, casera, barrio, código postal,
            resido, domicilio, de vuelta en, instalado en, instalada en, me instalé, alquilo un, alquilé un"""
        ),
        ignore=words("""vivo o muerto, en vivo, dirección de correo, dirección de email, dirección ip"""),
    ),
    "job": Lexicon(
        triggers=words(
            """trabajo de, trabajo como, puesto, empleo, curro, trabajando como, trabajando de, profesión,
            oficio, nuevo trabajo, cambié de trabajo, dimití, dimisión, renuncié, me despidieron, despido,
            en paro, ascenso, me ascendieron, jubilado, jubilada, autónomo, autónoma, prácticas, becario,
            becaria, media jornada, jornada completa, turno de, currando, teletrabajo"""
        ),
        values=words(
            """enfermero, enfermera, médica, profesor, profesora, profe, maestro, maestra, docente, cajero,
            cajera, dependiente, dependienta, camarero, camarera, cocinero, cocinera, chef, barista,
            programador, programadora, desarrollador, desarrolladora, desarrollador web, ingeniero, ingeniera,
            ingeniero de software, ingeniera de software, analista, analista de datos, científico de datos,
            científica de datos, jefe de proyecto, jefa de proyecto, gestor de proyectos,
            gestora de proyectos, diseñador, diseñadora, diseñador gráfico, diseñadora gráfica, arquitecto,
            arquitecta, abogado, abogada, contable, contador, contadora, economista, consultor, consultora,
            asesor, asesora, administrativo, administrativa, auxiliar administrativo, auxiliar administrativa,
            secretario, secretaria, recepcionista, comercial, vendedor, vendedora, teleoperador,
            teleoperadora, funcionario, funcionaria, policía, bombero, bombera, electricista, fontanero,
            fontanera, carpintero, carpintera, albañil, mecánico, repartidor, repartidora, camionero,
            camionera, taxista, peluquero, peluquera, limpiadora, empleada de hogar, niñera, cuidador,
            cuidadora, auxiliar de enfermería, farmacéutico, farmacéutica, fisioterapeuta, psicólogo,
            psicóloga, trabajador social, trabajadora social, periodista, traductor, traductora, fotógrafo,
            fotógrafa, artista, músico, actriz, investigador, investigadora, científico, científica,
            estudiante, becario, becaria, autónomo, autónoma, jubilado, jubilada, azafata, azafato,
            auxiliar de vuelo, agente inmobiliario, agente inmobiliaria, gerente, encargado, encargada,
            técnico de sistemas, técnica de laboratorio, community manager, maestro de primaria,
            maestra de primaria, opositor, opositora"""
        ),
        ignore=words("""puesto que, me he puesto, se ha puesto, he puesto, ha puesto, has puesto"""),
    ),
    "employer": Lexicon(
        triggers=words(
            """trabajo en, empresa, trabajando en, trabajo para, curro en, compañía, multinacional, agencia,
            me contrataron, contratado, contratada, me cogieron en, empecé en, entré a trabajar"""
        ),
        values=words("""multinacional, administración pública, bufete, consultora"""),
        ignore=words("""en compañía de"""),
    ),
    "diet": Lexicon(
        triggers=words(
            """vegano, vegetariano, carne, como carne, comer carne, dieta, alimentación, lácteos, gluten,
            lactosa, dejé la carne, he dejado la carne"""
        ),
        values=words(
            """vegano, vegana, veganos, veganas, vegetariano, vegetariana, vegetarianos, vegetarianas,
            pescetariano, pescetariana, pescatariano, pescatariana, flexitariano, flexitariana, crudivegano,
            crudivegana, omnívoro, omnívora, keto, cetogénica, dieta keto, sin gluten, celíaco, celíaca,
            celiaco, celiaca, sin lactosa, intolerante a la lactosa, halal, kosher, paleo, ayuno intermitente,
            basada en plantas"""
        ),
        ignore=words("""carné, carnet, carnaval, carnicería"""),
    ),
    "drink": Lexicon(
        triggers=words("""café, té, bebo, beber, bebida, cafeína, taza de, me tomo un, me tomo una"""),
        values=words(
            """café, café solo, café con leche, cortado, capuchino, carajillo, café descafeinado,
            descafeinado, café negro, café americano, café con hielo, té, té verde, té negro, té chai,
            té matcha, té rojo, matcha, rooibos, manzanilla, poleo, poleo menta, infusión, tila, yerba mate,
            chocolate caliente, colacao, cola cao, zumo, zumo de naranja, jugo, jugo de naranja, horchata,
            batido, leche de avena, leche de soja, leche de almendras, agua con gas, refresco, coca-cola,
            coca cola, bebida energética, cerveza, caña, tinto de verano, tinto, vino tinto, vino blanco,
            copa de vino, copas de vino, botella de vino, sidra, vermut, vermú, kombucha, sin alcohol,
            cerveza sin alcohol, agua mineral"""
        ),
    ),
    "car": Lexicon(
        triggers=words(
            """coche, carro, conduzco, conducir, mi coche, coche nuevo, coche eléctrico, híbrido,
            carnet de conducir, carné de conducir, el carnet, concesionario"""
        ),
        values=words("""seat ibiza, seat león, seat panda, seat 600, cupra formentor, cupra born"""),
        ignore=words("""carro de la compra, carrito"""),
    ),
    "partner": Lexicon(
        triggers=words(
            """me caso, casarme, casarnos, novio, novia, pareja, mi marido, mi esposo, mi esposa, mi mujer,
            mi chico, mi chica, prometido, prometida, me casé, nos casamos, boda, divorcio, me divorcié,
            lo dejamos, cortamos, rompimos, mi ex, relación, saliendo con, estoy soltero, estoy soltera,
            enamorad"""
        ),
        values=words(
            """casado, casada, soltero, soltera, divorciado, divorciada, viudo, viuda, prometido, prometida,
            pareja de hecho"""
        ),
        ignore=words("""en relación con, con relación a, relación entre, relaciones públicas"""),
    ),
    "pet": Lexicon(
        triggers=words(
            """perro, gato, mascota, mascotas, veterinario, veterinaria, adopté, adoptado, adoptada,
            adoptamos, protectora"""
        ),
        values=words(
            """perro, perra, perros, perrito, perrita, cachorro, cachorra, gato, gata, gatos, gatito, gatita,
            conejo, coneja, hámster, cobaya, cuy, loro, periquito, canario, tortuga, pez, peces, pececito,
            hurón, chinchilla, serpiente, iguana, caballo, pastor alemán, bulldog francés, perro salchicha,
            galgo, podenco, caniche, yorkshire"""
        ),
    ),
    "email": Lexicon(
        triggers=words("""correo, correo electrónico, mi email, dirección de correo, mi mail, mi correo"""),
        values=words("""yahoo, hotmail.es"""),
        ignore=words("""correos, oficina de correos"""),
    ),
    "phone": Lexicon(
        triggers=words(
            """teléfono, móvil, número, mi número, número de teléfono, número de móvil, celular,
            teléfono fijo, nuevo número"""
        ),
        ignore=words(
            """número de, un número, el número de, números, versión móvil, app móvil, aplicación móvil"""
        ),
    ),
    "money": Lexicon(
        triggers=words(
            """alquiler, sueldo, salario, cobro, cobrar, gano, ganar, nómina, presupuesto, ahorro, ahorrar,
            ahorrando, deuda, hipoteca, préstamo, pago, pagar, pagando, al mes, euros al mes,
            subida de sueldo, aumento de sueldo, bruto, neto, ingresos, gastos, facturas, paga extra,
            la paga"""
        ),
        ignore=words("""ganar tiempo, ganas, ganar peso, gano peso, ahorrar tiempo, ahorro tiempo"""),
    ),
    "appointment": Lexicon(
        triggers=words(
            """cita, dentista, cita con, cita médica, al médico, el médico, médico de cabecera, reunión,
            entrevista, entrevista de trabajo, revisión médica, consulta médica, la consulta del médico,
            reserva, reservado, reservé, peluquería, fisio, ginecólogo, ginecóloga, una analítica,
            analítica de sangre, vacuna, he pedido cita, pedí cita"""
        ),
        ignore=words("""reserva de memoria"""),
    ),
    "study": Lexicon(
        triggers=words(
            """curso, máster, carrera, estudio, estudiar, estudiando, estudios, universidad, facultad,
            grado en, licenciatura, doctorado, tesis, tfg, tfm, examen, exámenes, semestre, cuatrimestre,
            asignatura, matrícula, matriculé, matriculado, matriculada, oposiciones, oposito, bachillerato,
            selectividad, formación profesional, ciclo formativo, beca, carrera de"""
        ),
        values=words(
            """grado en derecho, carrera de derecho, estudio derecho, estudiando derecho, estudiar derecho,
            medicina, enfermería, economía, administración de empresas, ade, empresariales, informática,
            ingeniería, ingeniería informática, ingeniería industrial, matemáticas, química, biología,
            psicología, sociología, filosofía, filología, filología inglesa, periodismo, magisterio,
            educación infantil, educación primaria, trabajo social, odontología, bellas artes, diseño gráfico,
            ciencias políticas, relaciones internacionales, criminología, nutrición, biotecnología,
            ciencia de datos, doctorado, estudiante"""
        ),
        ignore=words(
            """en curso, cursor, cursores, a lo largo del curso, estudio de caso, un estudio, el estudio de"""
        ),
    ),
    "language": Lexicon(
        triggers=words(
            """aprendo, aprendiendo, aprender, idioma, idiomas, lengua, intercambio de idiomas, hablo bien,
            hablo fluido, nativo, nativa, bilingüe, academia de idiomas, escuela oficial de idiomas, eoi"""
        ),
        values=words(
            """inglés, español, castellano, francés, alemán, italiano, portugués, neerlandés, holandés, sueco,
            noruego, danés, finlandés, islandés, polaco, checo, eslovaco, húngaro, rumano, búlgaro, griego,
            ruso, ucraniano, serbio, croata, turco, árabe, hebreo, persa, farsi, urdu, hindi, bengalí,
            japonés, coreano, chino, chino mandarín, mandarín, cantonés, vietnamita, tailandés, indonesio,
            malayo, tagalo, suajili, catalán, euskera, gallego, valenciano, esperanto, latín,
            lengua de signos, lengua de señas"""
        ),
        ignore=words("""lenguaje, lenguajes, lenguaje de programación, aprender a programar"""),
    ),
    "hobby": Lexicon(
        triggers=words(
            """clase, club, clases de, afición, aficiones, pasatiempo, en mi tiempo libre, tiempo libre,
            me he apuntado, me apunté, apuntado a, apuntada a, entreno, entrenar, entrenamiento, deporte,
            gimnasio, liga, practico"""
        ),
        values=words(
            """escalada, búlder, boulder, salir a correr, maratón, media maratón, natación, nadar, ciclismo,
            senderismo, yoga, pilates, gimnasio, crossfit, boxeo, artes marciales, kárate, judo, esgrima,
            remo, surf, buceo, esquí, esquiar, snowboard, patinaje, fútbol, fútbol sala, baloncesto, voleibol,
            balonmano, tenis, pádel, bádminton, ajedrez, guitarra, piano, violín, canto, coro, baile, bailar,
            salsa, bachata, tango, ballet, flamenco, teatro, improvisación, cerámica, alfarería, hacer punto,
            ganchillo, costura, coser, pintura, pintar, dibujo, dibujar, acuarela, fotografía, jardinería,
            huerto, repostería, pesca, club de lectura, voluntariado, meditación, videojuegos, juegos de mesa,
            manualidades, calistenia"""
        ),
        ignore=words("""clase de objeto, una clase de python, clase abstracta"""),
    ),
    "favourite": Lexicon(
        triggers=words(
            """favorito, favorita, color, favoritos, favoritas, preferido, preferida, lo que más me gusta,
            mi color"""
        ),
        values=words(
            """azul, azul marino, azul claro, azul oscuro, azul cielo, rojo, granate, burdeos, verde,
            verde oliva, verde menta, verde botella, verde oscuro, amarillo, amarillo mostaza, naranja, rosa,
            rosa palo, morado, lila, violeta, negro, blanco, gris, marrón, beige, turquesa, terracota, dorado,
            plateado"""
        ),
    ),
    "tool": Lexicon(
        triggers=words(
            """uso, utilizo, ahora uso, estoy usando, cambié a, me pasé a, aplicación, app de,
            hoja de cálculo, editor de texto, sistema operativo, navegador"""
        ),
        ignore=words("""programa de, el programa, programar, programación, uso de, el uso, en uso"""),
    ),
    "trip": Lexicon(
        triggers=words(
            """viaje, vacaciones, viajar, viajo, viajamos, viajando, vuelo, vuelos, escapada, luna de miel,
            crucero, hotel, mochilero, mochilera, ruta por, itinerario, billete de avión, billetes de avión,
            pasaporte, de viaje, finde en, fin de semana en"""
        ),
    ),
}
